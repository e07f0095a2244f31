#!/usr/bin/env node
// `sai`, the package's command: runs the built CLI (dist/cli.js). The CLI's own `if (import.meta.main)` starts it only
// on Node ≥ 24.2, where `import.meta.main` exists; this launcher starts it on every Node the package supports (≥ 20).
import { main } from '../dist/cli.js';

process.exitCode = await main();
