// The request field of every URL the service delivers to (webhook endpoints, trace exports):
// one zod schema over the one rule in domain/delivery-url.ts.
import { z } from 'zod';
import { DELIVERY_URL_MAX_LENGTH, deliveryUrlProblem, type DeliveryUrlRules } from '../../domain/delivery-url.ts';

export const DELIVERY_URL_RULE = `an absolute https URL of at most ${DELIVERY_URL_MAX_LENGTH} characters, without credentials (user:password@ or a key in its query: 400 credential_value_refused), fragment, or private, link-local or reserved address literal. Outside production (NODE_ENV development or test) http and https to localhost, 127.0.0.1 or [::1] are accepted too, for local receivers. At send time the name is resolved and a private, link-local or (in production) loopback address is refused before any connection is opened. Redirects are not followed.`;

export function deliveryUrl(rules: DeliveryUrlRules, purpose: string) {
  return z
    .string()
    .max(DELIVERY_URL_MAX_LENGTH)
    .superRefine((value, ctx) => {
      const problem = deliveryUrlProblem(value, rules);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .meta({ description: `${purpose}: ${DELIVERY_URL_RULE}` });
}
