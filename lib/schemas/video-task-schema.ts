// JSON schema of POST /api/v3/contents/generations/tasks: the Ark create body (upstreams §2.2).
// Known fields are typed; every other Ark field passes through. The types below are what the schema
// accepts (object-schema.ts).
import type { ObjectSchema, OtherFields } from './object-schema.js';

type MediaUrl = { url: string } & OtherFields;

/** One content item: the field its `type` names is present; the others may be too (Ark reads them). */
export type VideoContentItem = {
  type: 'text' | 'image_url' | 'video_url' | 'audio_url' | 'draft_task';
  text?: string;
  role?: string;
  image_url?: MediaUrl;
  video_url?: MediaUrl;
  audio_url?: MediaUrl;
  /** A gateway task id of the caller (contract §2.6), swapped for Ark's before the call. */
  draft_task?: { id: string } & OtherFields;
} & OtherFields;

export interface VideoTaskFields {
  model: string;
  content: VideoContentItem[];
  callback_url?: string;
  safety_identifier?: string;
  return_last_frame?: boolean;
  generate_audio?: boolean;
  watermark?: boolean;
  camera_fixed?: boolean;
  draft?: boolean;
  seed?: number;
  duration?: number;
  frames?: number;
  priority?: number;
  execution_expires_after?: number;
  resolution?: string;
  ratio?: string;
  service_tier?: string;
}
export type VideoTaskBody = VideoTaskFields & OtherFields;

const mediaUrl = {
  type: 'object',
  required: ['url'],
  properties: { url: { type: 'string', minLength: 1, maxLength: 20 * 1024 * 1024 } },
} as const;

const contentItem = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'image_url', 'video_url', 'audio_url', 'draft_task'] },
    text: { type: 'string' },
    role: { type: 'string' },
    image_url: mediaUrl,
    video_url: mediaUrl,
    audio_url: mediaUrl,
    draft_task: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
  },
  // each item carries the field its type names
  allOf: [
    { if: { properties: { type: { const: 'text' } } }, then: { required: ['text'] } },
    { if: { properties: { type: { const: 'image_url' } } }, then: { required: ['image_url'] } },
    { if: { properties: { type: { const: 'video_url' } } }, then: { required: ['video_url'] } },
    { if: { properties: { type: { const: 'audio_url' } } }, then: { required: ['audio_url'] } },
    { if: { properties: { type: { const: 'draft_task' } } }, then: { required: ['draft_task'] } },
  ],
} as const;

export const videoTaskSchema: ObjectSchema<VideoTaskFields> = {
  $id: 'gateway/video-task',
  type: 'object',
  required: ['model', 'content'],
  properties: {
    model: { type: 'string', minLength: 1 },
    content: { type: 'array', minItems: 1, maxItems: 32, items: contentItem },
    callback_url: { type: 'string' },
    // contract §4.2: an irreversible identifier of the end user
    safety_identifier: { type: 'string', maxLength: 256 },
    return_last_frame: { type: 'boolean' },
    generate_audio: { type: 'boolean' },
    watermark: { type: 'boolean' },
    camera_fixed: { type: 'boolean' },
    draft: { type: 'boolean' },
    seed: { type: 'integer' },
    duration: { type: 'integer' },
    frames: { type: 'integer' },
    priority: { type: 'integer' },
    execution_expires_after: { type: 'integer', minimum: 1 },
    resolution: { type: 'string' },
    ratio: { type: 'string' },
    service_tier: { type: 'string' },
  },
};
