/**
 * V8 limits of a job-worker thread. The old generation bounds a run that allocates without end (the
 * thread dies, not the service); a young generation of 32 MB (semi-spaces of about 11 MB) keeps the
 * peak memory of a crawl near 200 MB where V8's default on a large machine let it reach 300-370 MB,
 * at the same pages/s (bench/README.md, "Memory").
 */
export const JOB_WORKER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 1024, maxYoungGenerationSizeMb: 32 } as const;
