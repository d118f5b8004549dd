// A gateway instance in its own process, so a test can kill it (SIGKILL) while it holds a job.
// Prints one line, {"url": "..."}, once it listens. Config comes in GATEWAY_INSTANCE as JSON.
import { listen } from './gateway-app.js';
import { type RedisInstanceConfig, startRedisInstance } from './redis-instance.js';

const config = JSON.parse(process.env.GATEWAY_INSTANCE ?? '{}') as RedisInstanceConfig;
const instance = startRedisInstance(config);
const server = await listen(instance.app);
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
