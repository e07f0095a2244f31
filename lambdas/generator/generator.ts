/**
 * The config generator's contract (docs/spec.md, "What the service does", 1; docs/generate.md): from a target URL
 * and a prompt in plain language, a YAML config that has been run and found items. Two generators implement
 * it: the heuristic one, which needs no LLM (./heuristic.ts), and the Claude agent, which starts from the
 * heuristic result (./agent.ts). The generate job (core/generate-job-executor.ts) runs one and reports its
 * steps as the job's states: analyzing (loading and reading the page), generating (building the config),
 * validating (running it).
 */
import type { ScrapeConfig } from '../engine/config.ts';
import type { Row } from '../engine/extract.ts';

/** What the user asked for (docs/spec.md, POST /api/v1/generate/). */
export interface GenerateRequest {
  /** The page to scrape: an absolute http(s) URL. */
  url: string;
  /** What to scrape, in plain language, e.g. "book titles, prices and ratings from every page". */
  prompt: string;
  /**
   * Other pages made from the same template (more listing pages, other searches), at most 4
   * (core/generate-jobs.ts `MAX_EXAMPLE_URLS`): the generator reads them to tell the records from the template's furniture and tries
   * the config on them (docs/generate.md, "Other pages of the template"). Absolute http(s) URLs, each checked by
   * the outbound guard before the job is queued.
   */
  exampleUrls?: string[];
}

/** The job states a generation goes through before it ends (docs/spec.md, "States and transitions"). */
export type GenerateStep = 'analyzing' | 'generating' | 'validating';

/** Progress of a generation, reported as it goes. */
export interface GenerateProgress {
  step: GenerateStep;
  /** 0-99, never goes down. */
  progress: number;
  /** For people: what is happening now, e.g. "found 3 repeated blocks; the largest has 20 items". */
  message: string;
}

/** What a trial run of a config produced (the first pages, a bounded number of items). */
export interface TrialRun {
  /** The rows of the trial (at most the trial's item limit). */
  rows: Row[];
  itemsFound: number;
  pagesScraped: number;
  engine: 'lightweight' | 'heavy';
  warnings: string[];
  /** Whether an XHR/fetch JSON answer carried most rows' values (browser runs). */
  apiDiscovered: boolean;
}

/** A finished generation. */
export interface GenerationResult {
  /** The config as YAML text (what is saved and shown). */
  yaml: string;
  /** The same config, parsed and normalized. */
  config: ScrapeConfig;
  /** The trial run that validated it: at least one row. */
  trial: TrialRun;
  /** Whether the page's items came from a JSON API it calls. */
  apiDiscovered: boolean;
  /** The endpoint that carried the items, when one did. */
  apiEndpoint?: string;
  /** Which generator produced it. */
  generator: 'heuristic' | 'agent';
  /** What it found and decided, in order, for the job's status_message and the logs. */
  notes: string[];
}
