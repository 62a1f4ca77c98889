// The Worker of the workerd suite: the scenarios and the webhook receiver of app.mjs, with the
// client's settings read from its text bindings.
import { createApp } from './app.mjs';

export default {
  fetch(request, env) {
    return createApp(env).fetch(request);
  },
};
