/** File names of the extension's exports. */
import type { ExportFormat } from '../../../../lambdas/export/rows-export.ts';

/**
 * The export's file name: the config's name as a slug (letters, digits and dashes; `rows` when nothing is
 * left), the run's local date as YYYY-MM-DD, and the format's extension, e.g. `quotes-2026-11-24.csv`.
 */
export function exportFileName(configName: string, format: ExportFormat, when: Date): string {
  const slug = configName.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60).replace(/-+$/, '') || 'rows';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${slug}-${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}.${format}`;
}
