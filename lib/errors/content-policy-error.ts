// The refusals of the moderation policy (docs/content-safety.md): the contract §2.5 object with
// `content_policy_violation`, plus the flagged category names and the stage (`input`: the caller's
// prompt or images, `output`: every image made was flagged). Never a score, never the checker's answer.
import { ERROR_CODES } from './error-codes.js';
import { GatewayError, type GatewayErrorBody } from './gateway-error.js';

export type ContentPolicyStage = 'input' | 'output';

export class ContentPolicyError extends GatewayError {
  readonly categories: readonly string[];
  readonly stage: ContentPolicyStage;

  constructor(message: string, param: string | undefined, categories: readonly string[], stage: ContentPolicyStage) {
    super({ status: 400, code: ERROR_CODES.contentPolicyViolation, message, ...(param !== undefined ? { param } : {}) });
    this.name = 'ContentPolicyError';
    this.categories = categories;
    this.stage = stage;
  }

  override toJSON(): GatewayErrorBody {
    const body = super.toJSON();
    return { error: { ...body.error, categories: [...this.categories], stage: this.stage } };
  }
}
