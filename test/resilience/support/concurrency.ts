/**
 * Bounded concurrency for load on the client side: `count` jobs, at most `limit` at once, as a
 * client with a connection pool would send them.
 */

/**
 * Runs `job(0..count-1)` with at most `limit` in flight; resolves to the results in index
 * order. A failing job does not stop the others; the first failure is thrown once all settled.
 */
export async function runConcurrently<T>(
  count: number,
  limit: number,
  job: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  const failures: unknown[] = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      try {
        results[index] = await job(index);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
  if (failures.length > 0) throw failures[0];
  return results;
}
