/** The execution baseline's activity: does nothing, like the `Flow/NoOp` plugin. */
export const baselineActivities = {
  async noop(): Promise<void> {},
};
