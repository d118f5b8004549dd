// isGatewayPath (lib/express/skip-gateway-routes.ts): which request paths a host's parsers must leave to
// the gateway, at the root and under a mount path, in any case, with or without a query.
import { describe, expect, it } from 'vitest';
import { isGatewayPath, skipGatewayRoutes } from '../../lib/index.js';

describe('isGatewayPath', () => {
  it.each([
    ['/v1/images/generations', undefined, true],
    ['/v1', undefined, true],
    ['/V1/Images/Edits', undefined, true],
    ['/api/v3/contents/generations/tasks/task_x?x=1', undefined, true],
    ['/v1/images/tasks/abc', undefined, true],
    ['/v10/things', undefined, false],
    ['/v1x', undefined, false],
    ['/api/v2/things', undefined, false],
    ['/account', undefined, false],
    ['/ai/v1/images/generations', '/ai', true],
    ['/ai/v1/images/generations', '/ai/', true],
    ['/AI/api/v3/open/CreateAsset', '/ai', true],
    ['/v1/images/generations', '/ai', false],
    ['/aiv1/images', '/ai', false],
    ['/ai/v1#frag', '/ai', true],
  ])('%s under %s: %s', (path, mountPath, expected) => {
    expect(isGatewayPath(path, { mountPath })).toBe(expected);
  });

  it('refuses a mount path that is not a path, and a middleware that is not a function', () => {
    expect(() => isGatewayPath('/v1', { mountPath: 'ai' })).toThrow("mountPath must start with '/'");
    expect(() => skipGatewayRoutes(undefined as never)).toThrow('skipGatewayRoutes(middleware)');
  });
});
