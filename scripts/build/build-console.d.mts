// Types of build-console.mjs, for the TypeScript that calls it (the test harness).
export declare const consoleDist: string;
export declare function buildConsole(options?: { say?: (line: string) => void }): Promise<void>;
/** Builds the console unless console/dist is a build of its current sources; true when it built. */
export declare function buildConsoleIfStale(options?: {
  say?: (line: string) => void;
}): Promise<boolean>;
export declare function isConsoleBuildCurrent(): Promise<boolean>;
