/**
 * Background work yields the CPU to the thread that answers HTTP (issue 24: another account's `GET /me/` stays fast
 * while pages are crawled, analysed and rendered). The job workers, the tool workers, the config-parsing thread and
 * the Chromium they start run at a lower scheduling priority (a higher nice value) than the process's HTTP thread, so
 * that on a busy machine the kernel runs a waiting request first. Work is not slowed when the CPU is free.
 *
 * Linux only (elsewhere these do nothing): a nice value belongs to a thread there (setpriority(2) on a thread id),
 * which `os.setPriority` reaches with the thread's id from `/proc/thread-self`. Raising one's own nice value needs
 * no privilege; nothing here ever lowers it.
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';

/** The nice value of background threads and processes (0 is the default, 19 the lowest priority). */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread's priority to {@link BACKGROUND_NICE} (never raises it).
 * @returns whether the priority was set (false off Linux, or when `/proc` cannot be read).
 */
export function lowerThisThreadPriority(nice = BACKGROUND_NICE): boolean {
  const tid = thisThreadId();
  if (tid === null) return false;
  try {
    if (getPriority(tid) < nice) setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

/**
 * Lowers the priority of every process of a process group (a browser started detached leads its own group: the
 * browser, its zygote and the processes it has started so far; the renderers it forks later inherit the zygote's
 * priority) to {@link BACKGROUND_NICE}, and the nice value of its scheduling autogroup when it leads a session of its
 * own (see {@link lowerSessionAutogroup}).
 * @returns how many processes were lowered (0 off Linux).
 */
export function lowerProcessGroupPriority(pgid: number, nice = BACKGROUND_NICE): number {
  if (process.platform !== 'linux') return 0;
  lowerSessionAutogroup(pgid, nice);
  let lowered = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // /proc/PID/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const pid = Number(name);
      if (getPriority(pid) < nice) setPriority(pid, nice);
      lowered++;
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return lowered;
}

/**
 * Lowers the nice value of the scheduling autogroup of `pid` (sched(7), "The autogroup feature"), when that is a
 * group of its own. With `kernel.sched_autogroup_enabled` (the default of most desktop and many server kernels),
 * the kernel first shares the CPU between sessions, and only then between the threads of one by their nice values:
 * a process started detached (`setsid`, as puppeteer starts Chromium) has a session, and so an autogroup, of its own
 * at nice 0, and then weighs as much as this whole service, whatever the nice value of its processes. Measured in
 * the fault suite beside a second `npm test`: four Chromiums each in an autogroup at nice 0, two of their processes
 * at nice -8 (Chromium raises its own when it may). Writing `/proc/PID/autogroup` needs no privilege to raise the
 * value; the process's own autogroup (the caller's, when `pid` did not start a session) is never touched.
 * @returns whether the autogroup's nice value was set (false off Linux, without autogroups, or when `pid` shares
 *   the caller's autogroup).
 */
export function lowerSessionAutogroup(pid: number, nice = BACKGROUND_NICE): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // "/autogroup-1966 nice 0"
    const theirs = readFileSync(`/proc/${pid}/autogroup`, 'utf8').split(' ')[0];
    const ours = readFileSync('/proc/self/autogroup', 'utf8').split(' ')[0];
    if (!theirs || theirs === ours) return false;
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
    return true;
  } catch {
    return false;
  }
}

/**
 * Lowers V8's platform threads of this process (`V8Worker`: concurrent marking and sweeping, and compiling in the
 * background, for every isolate, the worker threads' included) to {@link BACKGROUND_NICE}. They are started with
 * the process, at its nice value, and the HTTP thread's own garbage collection does not wait for them (a parallel
 * scavenge does the work on its own thread when helpers are late). Measured in the fault suite: the four used about
 * 2.7 times the CPU of the HTTP thread, all of it for the job and tool workers' pages.
 * @returns how many threads were lowered (0 off Linux).
 */
export function lowerPlatformThreads(nice = BACKGROUND_NICE): number {
  if (process.platform !== 'linux') return 0;
  let lowered = 0;
  try {
    for (const name of readdirSync('/proc/self/task')) {
      try {
        if (readFileSync(`/proc/self/task/${name}/comm`, 'utf8').trim() !== 'V8Worker') continue;
        const tid = Number(name);
        if (getPriority(tid) < nice) setPriority(tid, nice);
        lowered++;
      } catch {
        // Gone meanwhile.
      }
    }
  } catch {
    return lowered;
  }
  return lowered;
}

/** The time slice the thread that answers HTTP asks for, ns (Linux clamps it to 0.1-100 ms; the default is 3 ms). */
export const HTTP_THREAD_SLICE_NS = 300_000;

/** sched_setattr(2) and sched_getattr(2) numbers by architecture (the kernel's syscall tables). */
const SCHED_SYSCALLS: Record<string, { set: number; get: number }> = { x64: { set: 314, get: 315 }, arm64: { set: 274, get: 275 } };

/**
 * Asks the kernel for a short time slice for thread `tid` (a process id names its main thread): sched_setattr(2) with
 * SCHED_OTHER and `sched_runtime`, which EEVDF (Linux 6.12 and later) reads as the thread's requested slice: a
 * thread with a shorter slice gets an earlier virtual deadline, so when it wakes (a request came in) it runs before
 * the threads that have been using the CPU, and may preempt them ("sched/eevdf: Allow shorter slices to
 * wakeup-preempt", the kernel's `PREEMPT_SHORT`). It costs the thread nothing in share: its weight, so its part of the
 * CPU, is unchanged. Needs no privilege (the nice value is kept); older kernels accept and ignore it. Set with
 * `SCHED_FLAG_RESET_ON_FORK`: the threads and processes it starts later (workers, Chromium) keep the default slice.
 *
 * Node has no call for it, so it is made by `perl`'s `syscall` (Perl is part of every Debian and Ubuntu install);
 * without perl, off Linux, or on an unknown architecture, nothing is done.
 * @returns the slice now set, ns, as sched_getattr(2) reads it back, or null when nothing could be set.
 */
export function requestShortSlice(tid: number, sliceNs = HTTP_THREAD_SLICE_NS): number | null {
  const calls = SCHED_SYSCALLS[process.arch];
  if (process.platform !== 'linux' || !calls) return null;
  // struct sched_attr, SCHED_ATTR_SIZE_VER0 (48 bytes): size, policy (SCHED_OTHER), flags (SCHED_FLAG_RESET_ON_FORK),
  // nice, priority, runtime (the slice), deadline, period.
  const script = `
    my ($tid, $slice, $set) = @ARGV;
    my $nice = getpriority(0, $tid);
    my $attr = pack("LLQlLQQQ", 48, 0, 1, $nice, 0, $slice, 0, 0);
    syscall($set, $tid + 0, $attr, 0) == 0 or exit 1;`;
  try {
    const r = spawnSync('perl', ['-e', script, String(tid), String(sliceNs), String(calls.set)], { timeout: 5_000 });
    if (r.status !== 0) return null;
  } catch {
    return null;
  }
  const slice = threadSlice(tid);
  return slice ? slice : null;
}

/**
 * The time slice thread `tid` asked for, ns, as sched_getattr(2) reads it (0 or the kernel's default when it asked
 * for none), or null when it cannot be read (off Linux, no perl).
 */
export function threadSlice(tid: number): number | null {
  const calls = SCHED_SYSCALLS[process.arch];
  if (process.platform !== 'linux' || !calls) return null;
  const script = 'my $o = pack("LLQlLQQQ", 0, 0, 0, 0, 0, 0, 0, 0); syscall($ARGV[1], $ARGV[0] + 0, $o, 48, 0) == 0 or exit 1; print((unpack("LLQlLQQQ", $o))[5]);';
  try {
    const r = spawnSync('perl', ['-e', script, String(tid), String(calls.get)], { encoding: 'utf8', timeout: 5_000 });
    return r.status === 0 && r.stdout !== '' ? Number(r.stdout) : null;
  } catch {
    return null;
  }
}

/** The calling thread's id (Linux), or null. */
export function thisThreadId(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}
