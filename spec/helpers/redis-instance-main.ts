// A gateway instance in its own process, so a test can kill it (SIGKILL) while it holds a job.
// Prints one line, {"url": "..."}, once it listens, then one line {"usage": <event>} per usage event it
// emits, so the books of an instance that is killed can still be read. Config comes in GATEWAY_INSTANCE as JSON.
import { listen } from './gateway-app.js';
import { type RedisInstanceConfig, startRedisInstance } from './redis-instance.js';

const config = JSON.parse(process.env.GATEWAY_INSTANCE ?? '{}') as RedisInstanceConfig;
const instance = startRedisInstance(config);
const push = instance.usage.push.bind(instance.usage);
instance.usage.push = (...events) => {
  for (const event of events) process.stdout.write(`${JSON.stringify({ usage: event })}\n`);
  return push(...events);
};
const server = await listen(instance.app);
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
