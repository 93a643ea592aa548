// Completion notifications: the retry schedule of one delivery and the endpoint limits
// (the URL rule is domain/delivery-url.ts). Pure (no Node modules, type-only imports), so the
// workflow can import the retry policy without pulling activity code into its bundle.
import type { RetryPolicy } from '@temporalio/common';

/** Attempts per (notification, endpoint): the first and 7 retries. */
export const NOTIFICATION_MAX_ATTEMPTS = 8;

/**
 * The retry policy of `deliverNotification`. Attempts start at 0 s, +30 s, +2 min, +8 min, +32 min,
 * +2 h 8 min, +6 h, +6 h: 8 attempts over about 14 h 50 min. Every attempt carries the same
 * webhook-id. The activity marks its delivery failed on attempt NOTIFICATION_MAX_ATTEMPTS and then
 * throws a non-retryable failure, so a longer policy cannot outlive the recorded outcome.
 * Give the activity a startToCloseTimeout above WEBHOOK_TIMEOUT_MS (e.g. 30 s).
 */
export const NOTIFICATION_RETRY: RetryPolicy = {
  initialInterval: '30 seconds',
  backoffCoefficient: 4,
  maximumInterval: '6 hours',
  maximumAttempts: NOTIFICATION_MAX_ATTEMPTS,
};

/** Live endpoints a tenant may have at once; one more is 409 webhook_endpoint_limit_reached. */
export const MAX_WEBHOOK_ENDPOINTS = 10;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 200;
