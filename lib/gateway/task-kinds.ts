// The kinds of task the gateway runs (docs/architecture.md "One task lifecycle, a kind per executor"),
// one executor each, in the one list the task service (tasks/task-service.ts) dispatches over: image
// tasks, which this process runs (image-tasks/), and video tasks, which their vendor runs
// (video-tasks/). A third kind is its record type (stores/tasks/task-store.ts), its executor's folder
// and one line here.
import type { GatewayDeps } from './gateway-deps.js';
import { ImageTaskExecutor, type ImageTaskTypes } from './image-tasks/image-task-executor.js';
import { TaskService } from './tasks/task-service.js';
import { VideoTaskExecutor, type VideoTaskTypes } from './video-tasks/video-task-executor.js';

/** What each kind of task exchanges with its routes. */
export interface GatewayTaskTypes {
  image: ImageTaskTypes;
  video: VideoTaskTypes;
}

/** The one task service of a router, over every kind. */
export type GatewayTasks = TaskService<GatewayTaskTypes>;

/** The router's task service: one executor per kind, made once. */
export function createTaskService(deps: GatewayDeps): GatewayTasks {
  return new TaskService<GatewayTaskTypes>(deps.options, { image: new ImageTaskExecutor(deps), video: new VideoTaskExecutor(deps) });
}
