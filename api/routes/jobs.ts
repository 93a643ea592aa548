import { z } from 'zod';
import { JOBS } from '../../domain/jobs.ts';
import { defineRoute } from '../contract/route.ts';

const Job = z
  .object({
    id: z.string().meta({ description: 'Job or recipe id; trial recipes use it as recipe_id.' }),
    kind: z.enum(['customer_job', 'trial_recipe']),
    name: z.string(),
    description: z.string().meta({ description: 'What it does.' }),
    access: z.object({
      path: z.enum(['core_api', 'workspace_pilot', 'public_trial']),
      auth: z.enum(['core_key', 'workspace_key', 'none']),
      routes: z.array(z.string()),
      terms: z.string(),
    }),
  })
  .meta({ id: 'CustomerJob' });

const JobList = z.object({ object: z.literal('list'), jobs: z.array(Job) }).meta({ id: 'JobList' });

export function jobRoutes() {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/jobs',
      operationId: 'listJobs',
      summary: 'Customer jobs and trial recipes',
      description: 'Public: no key needed (the machine-readable contract declares none).',
      tags: ['public'],
      auth: 'none',
      responses: { 200: { description: 'The three customer jobs and the three trial recipes.', schema: JobList } },
      handler: () => ({ status: 200, body: { object: 'list', jobs: JOBS } }),
    }),
  ];
}
