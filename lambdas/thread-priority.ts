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
import { getPriority, setPriority } from 'node:os';

/** The nice value of background threads and processes (0 is the default, 19 the lowest priority). */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread's priority to {@link BACKGROUND_NICE} (never raises it).
 * @returns whether the priority was set (false off Linux, or when `/proc` cannot be read).
 */
export function lowerThisThreadPriority(nice = BACKGROUND_NICE): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
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
