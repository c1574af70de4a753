/** Webhook verification, its own entry point (`@analytics/sdk/webhooks`): it needs node:crypto, the client does not. */
export { verify, WebhookVerificationError, type VerifyOptions } from "./core/webhooks";
