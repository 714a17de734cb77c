/** The production topology (test/deploy/support/topology.ts) on the tests' Temporal dev server. */
import { testServices } from '../support/services.js';
import { describeTopology } from './support/topology.js';

describeTopology({
  name: 'the dev server',
  start: async () => {},
  get address() {
    return testServices().temporalAddress;
  },
});
