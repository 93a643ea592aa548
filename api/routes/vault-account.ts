// Vault administration (workspace key): integrity check, account state and
// workspace key management.
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import type { KeyRecord } from '../../services/keys.ts';
import type { VaultService } from '../../services/vault/index.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';
import { IntegrityReport, VaultAccount, WorkspaceKey } from '../schemas/vault.ts';

const tags = ['vault'];

function keyView(k: KeyRecord, currentKeyId: string) {
  return {
    id: k.id,
    kind: 'workspace' as const,
    prefix: k.prefix,
    label: k.label,
    created_at: k.createdAt.toISOString(),
    revoked_at: k.revokedAt ? k.revokedAt.toISOString() : null,
    current: k.id === currentKeyId,
  };
}

export function vaultAccountRoutes(deps: { vault: VaultService }) {
  const { vault } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/vault/integrity-check',
      operationId: 'checkVaultIntegrity',
      summary: 'Verify every entry and the hash chain',
      description:
        "Recomputes each entry's digest and the tenant's hash chain over every vault write, and reports entries changed or missing behind the service's back.",
      tags,
      auth: 'workspace',
      responses: { 200: { description: 'The report; ok is false when anything is off.', schema: IntegrityReport } },
      async handler({ principal }) {
        const report = await vault.integrity(principal!.tenantId);
        return { status: 200, body: { object: 'vault_integrity_report', ...report, checked_at: new Date().toISOString() } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vault/account',
      operationId: 'getVaultAccount',
      summary: 'Workspace account state',
      description: 'Entry counts by state, storage used, hash-chain length and the workspace keys.',
      tags,
      auth: 'workspace',
      responses: { 200: { description: 'Account state.', schema: VaultAccount } },
      async handler({ principal }) {
        const account = await vault.account(principal!.tenantId);
        const keys = await vault.keys.list(principal!.tenantId);
        return {
          status: 200,
          body: { object: 'vault_account', tenant_id: principal!.tenantId, ...account, keys: keys.map((k) => keyView(k, principal!.keyId)) },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vault/keys',
      operationId: 'listWorkspaceKeys',
      summary: 'List workspace keys (never secrets)',
      tags,
      auth: 'workspace',
      responses: {
        200: { description: 'Keys.', schema: z.object({ object: z.literal('list'), data: z.array(WorkspaceKey) }).meta({ id: 'WorkspaceKeyList' }) },
      },
      async handler({ principal }) {
        const keys = await vault.keys.list(principal!.tenantId);
        return { status: 200, body: { object: 'list', data: keys.map((k) => keyView(k, principal!.keyId)) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vault/keys',
      operationId: 'createWorkspaceKey',
      summary: 'Create a workspace key',
      description: 'The secret is in this response only. A workspace key authenticates /v1/vault routes and nothing else.',
      tags,
      auth: 'workspace',
      request: { body: z.strictObject({ label: z.string().max(100).trim().min(1).optional() }).meta({ id: 'CreateWorkspaceKey' }) },
      responses: {
        201: {
          description: 'The new key with its secret, shown once.',
          schema: WorkspaceKey.extend({ secret: z.string() }).meta({ id: 'CreatedWorkspaceKey' }),
        },
      },
      async handler({ principal, body }) {
        const key = await vault.keys.create(principal!.tenantId, body.label, principal!.keyId);
        return { status: 201, body: { ...keyView(key, principal!.keyId), secret: key.secret } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/vault/keys/{key_id}',
      operationId: 'revokeWorkspaceKey',
      summary: 'Revoke a workspace key',
      description: 'It stops authenticating at once, including when it is the key making this request.',
      tags,
      auth: 'workspace',
      request: { params: z.object({ key_id: z.string().min(1).max(64) }) },
      responses: {
        200: { description: 'Revoked.', schema: z.object({ id: z.string(), revoked: z.literal(true) }).meta({ id: 'RevokedKey' }) },
        404: { description: 'No active workspace key with this id for your tenant.', schema: ErrorObject },
      },
      async handler({ principal, params }) {
        if (!(await vault.keys.revoke(principal!.tenantId, params.key_id, principal!.keyId))) throw errors.notFound('No such active workspace key.');
        return { status: 200, body: { id: params.key_id, revoked: true } };
      },
    }),
  ];
}
