import semver from 'semver';

/** Orders packages by type (case-insensitively), then by semver. */
export function compareTypeAndVersion(
  a: { type: string; version: string },
  b: { type: string; version: string },
): number {
  return (
    a.type.localeCompare(b.type, 'en', { sensitivity: 'base' }) ||
    semver.compare(a.version, b.version)
  );
}
