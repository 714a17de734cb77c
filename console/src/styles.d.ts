// Stylesheets are bundled by esbuild (imported for their effect only).
declare module '*.css';
