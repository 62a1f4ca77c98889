/** Small text helpers shared by the commands' readable output. */

/** `512 B`, `1.2 KB`, `4.8 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `key: value` lines with the values aligned, for a result object. */
export function keyValueLines(record: Record<string, unknown>): string[] {
  const width = Math.max(...Object.keys(record).map((key) => key.length));
  return Object.entries(record).map(
    ([key, value]) =>
      `${`${key}:`.padEnd(width + 1)} ${typeof value === 'string' ? value : JSON.stringify(value)}`,
  );
}
