// @ts-check
// The deployment's features (telephony, the sandbox, which providers have
// keys) come with who is signed in (getMe) and decide what the console
// offers: the Phone tab, the sandbox banner, the Test panel's provider. A
// restart can change them (TELEPHONY_ENABLED turned on), and a console that
// read them once showed the old ones until a full reload. So it reads them
// again: every few seconds while the tab is visible, every second while the
// server cannot be reached, at once when the tab comes back into view, and
// when they changed it draws the frame and the page again.

import { APIError, getMe, sessionToken } from "./api.js";
import { me, updateMe } from "./router.js";

const EVERY_MS = 5000; // while the server answers
const LOST_MS = 1000; // while it does not (a restart): catch it coming back

/**
 * watchFeatures calls changed() after the router's user has taken features
 * that differ from the ones the console shows.
 * @param {() => void} changed
 */
export function watchFeatures(changed) {
  let timer = 0;
  let lost = false;
  const check = async () => {
    clearTimeout(timer);
    const shown = me();
    if (sessionToken() && shown && document.visibilityState === "visible") {
      try {
        const now = await getMe();
        lost = false;
        // Only if nobody signed out or in meanwhile.
        if (me() === shown && JSON.stringify(now.features) !== JSON.stringify(shown.features)) {
          updateMe(now);
          changed();
        }
      } catch (err) {
        // 0: no answer at all; 502 to 504: a proxy in front of a server
        // that is down or starting.
        const status = err instanceof APIError ? err.status : -1;
        lost = status === 0 || (status >= 502 && status <= 504);
      }
    }
    timer = setTimeout(check, lost ? LOST_MS : EVERY_MS);
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") check();
  });
  timer = setTimeout(check, EVERY_MS);
}
