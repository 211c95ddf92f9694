// The deployment's features (telephony, the sandbox, which providers have
// keys) come with GET /api/me and decide what the console offers: the
// Phone tab, the sandbox banner, the Test panel's provider. A restart can
// change them (TELEPHONY_ENABLED turned on), and a console that read them
// once showed the old ones until a full reload. So it reads
// them again: every few seconds while the tab is visible, every second
// while the server cannot be reached, at once when the tab comes back into
// view, and when they changed it draws the frame and the page again.

import { state, api } from "./ui.js";

const EVERY_MS = 5000; // while the server answers
const LOST_MS = 1000; // while it does not (a restart): catch it coming back

// watchFeatures calls changed() after state.me has taken features that
// differ from the ones the console shows.
export function watchFeatures(changed) {
  let timer = 0;
  let lost = false;
  const check = async () => {
    clearTimeout(timer);
    if (state.token && state.me && document.visibilityState === "visible") {
      const shown = state.me;
      try {
        const me = await api("GET", "/api/me");
        lost = false;
        // Only if nobody signed out or in meanwhile.
        if (state.me === shown && JSON.stringify(me.features) !== JSON.stringify(shown.features)) {
          state.me = me;
          changed();
        }
      } catch (err) {
        // 0: no answer at all; 502 to 504: a proxy in front of a server
        // that is down or starting.
        lost = err.status === 0 || (err.status >= 502 && err.status <= 504);
      }
    }
    timer = setTimeout(check, lost ? LOST_MS : EVERY_MS);
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") check();
  });
  timer = setTimeout(check, EVERY_MS);
}
