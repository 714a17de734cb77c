/** The types of eslint.config.js's exports, for the scripts that read its room table. */
export declare const mayImport: Record<string, string[]>;
declare const config: unknown;
export default config;
