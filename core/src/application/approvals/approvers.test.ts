import { describe, expect, it } from 'vitest';
import { decisionRefusal } from './approvers.js';

const approval = (approvers: Parameters<typeof decisionRefusal>[0]['approvers']) => ({
  id: 'a1',
  taskName: 'Gate',
  approvers,
});
const alice = { name: 'alice', roles: ['workflow' as const] };
const root = { name: 'root', roles: ['admin' as const] };

describe('decisionRefusal', () => {
  it('lets anyone decide without approvers, the starter too', () => {
    expect(decisionRefusal(approval(null), alice, 'alice')).toBeNull();
  });

  it('lets listed users and role holders decide, and names them to others', () => {
    const gate = approval({ users: ['alice'], roles: ['admin'], allowSelfApproval: true });
    expect(decisionRefusal(gate, alice, null)).toBeNull();
    expect(decisionRefusal(gate, root, null)).toBeNull();
    const refusal = decisionRefusal(gate, { name: 'bob', roles: ['workflow'] }, null);
    expect(refusal).toContain(
      'User "bob" may not decide approval a1 of task "Gate" (is not an approver)',
    );
    expect(refusal).toContain('the users "alice" or holders of the roles admin');
  });

  it('refuses the starter unless allowSelfApproval, even when listed', () => {
    expect(decisionRefusal(approval({ users: ['alice'] }), alice, 'alice')).toContain(
      '(started the run)',
    );
    expect(decisionRefusal(approval({}), alice, 'alice')).toContain(
      'except the user who started the run ("alice")',
    );
    expect(decisionRefusal(approval({ allowSelfApproval: true }), alice, 'alice')).toBeNull();
    expect(decisionRefusal(approval({}), alice, null)).toBeNull();
  });
});
