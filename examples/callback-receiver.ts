// The example's own callback receiver: `POST /hooks/video` on the host app, verifying each delivery's
// Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature) with the gateway's
// signing secret, printing what it verified, and answering 204 (400 for a bad signature). It is what
// a host would write, and the video example of docs/video-tasks-and-callbacks.md points its callback_url here.
import express, { type Router } from 'express';
import { Webhook } from 'standardwebhooks';

interface VerifiedDelivery {
  webhookId: string;
  taskId: string;
  status: string;
}

export interface CallbackReceiver {
  router: Router;
  /** The path the router answers, `/hooks/video`. */
  path: string;
  /** Every delivery whose signature verified, oldest first (at most the last 100). */
  deliveries: VerifiedDelivery[];
}

const PATH = '/hooks/video';
const KEPT = 100;

export function createCallbackReceiver(signingSecret: string, log: (line: string) => void = console.log): CallbackReceiver {
  const webhook = new Webhook(signingSecret);
  const deliveries: VerifiedDelivery[] = [];
  const router = express.Router();
  // the raw text is what was signed: a parsed-and-reserialized body would not verify
  router.post(PATH, express.text({ type: '*/*', limit: '1mb' }), (req, res) => {
    let task: { id?: unknown; status?: unknown };
    try {
      task = webhook.verify(typeof req.body === 'string' ? req.body : '', req.headers as Record<string, string>) as typeof task;
    } catch {
      log('[callback] refused a delivery whose signature did not verify');
      res.status(400).json({ error: 'signature did not verify' });
      return;
    }
    const delivery = { webhookId: String(req.headers['webhook-id']), taskId: String(task.id), status: String(task.status) };
    deliveries.push(delivery);
    if (deliveries.length > KEPT) deliveries.shift();
    // contract §6.4-6.5: deliveries may repeat; a receiver confirms with a query before acting
    log(`[callback] verified ${delivery.webhookId}: task ${delivery.taskId} is ${delivery.status}`);
    res.sendStatus(204);
  });
  return { router, path: PATH, deliveries };
}
