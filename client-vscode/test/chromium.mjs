// How the tests launch Debian's Chromium: headless, and quiet on the network (no updates, sync or
// component downloads — the tests must never reach the internet).
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-default-apps', '--mute-audio',
  '--disable-domain-reliability', '--metrics-recording-only'];
