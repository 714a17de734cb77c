// The part of oidc-provider 9's API the tests use (the package ships no types).
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    callback(): RequestListener;
  }
}
