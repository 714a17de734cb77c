import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging.js';
import { startTracing, tracesUrl } from './tracing.js';

describe('tracesUrl', () => {
  it("appends OTLP's traces path to a collector's endpoint, as OTLP exporters do", () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otel.example.com/ingest')).toBe(
      'https://otel.example.com/ingest/v1/traces',
    );
  });

  it('keeps an endpoint that already names the traces path', () => {
    expect(tracesUrl('http://collector:4318/v1/traces')).toBe('http://collector:4318/v1/traces');
  });
});

describe('startTracing', () => {
  it('starts nothing without Telemetry.OtlpEndpoint', () => {
    const logger = createLogger({ Level: 'silent' });
    expect(
      startTracing(
        { ServiceName: 'trellis', SampleRatio: 1 },
        { role: 'all', version: '1', logger },
      ),
    ).toBe(undefined);
  });
});
