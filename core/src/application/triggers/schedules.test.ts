import { describe, expect, it } from 'vitest';
import {
  checkTimeBasedProperties as checkTimeBasedPropertiesProblems,
  validateCron,
} from './schedules.js';
import { renderProblem } from '#definition/validation/problem.js';

/** What a user reads of each problem. */
const checkTimeBasedProperties = (...args: Parameters<typeof checkTimeBasedPropertiesProblems>) =>
  checkTimeBasedPropertiesProblems(...args).map(renderProblem);

describe('validateCron', () => {
  it('accepts 5-field cron and IANA zones, and says what is wrong otherwise', () => {
    expect(validateCron('*/5 * * * *')).toBeNull();
    expect(validateCron('0 9 * * MON-FRI', 'America/New_York')).toBeNull();
    expect(validateCron('0 0 * * * *')).toMatch(/5 fields/);
    expect(validateCron('0 25 * * *')).toMatch(/hour/);
    expect(validateCron('0 0 * * *', 'Nowhere/City')).toMatch(/IANA/);
  });
});

describe('checkTimeBasedProperties', () => {
  it('needs a cron string and reads keys case-insensitively', () => {
    expect(checkTimeBasedProperties({ Cron: '0 0 * * *', TimeZone: 'Asia/Tokyo' })).toEqual([]);
    expect(checkTimeBasedProperties({})).toEqual([
      'properties.cron is required for a TimeBased trigger',
    ]);
    expect(checkTimeBasedProperties({ cron: 5 })).toEqual([
      'properties.cron is required for a TimeBased trigger',
    ]);
    expect(checkTimeBasedProperties({ cron: '0 0 * * *', timezone: 1 })).toEqual([
      'properties.timezone must be a string',
    ]);
    expect(checkTimeBasedProperties({ cron: 'x' })[0]).toMatch(
      /^properties: cron must have 5 fields/,
    );
  });
});
