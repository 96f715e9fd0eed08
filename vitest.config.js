import { defineConfig } from 'vitest/config';

// Unit tests of the browser engine and app modules (Node, fake timers, fake-indexeddb).
// The end-to-end tests in e2e/ run under `node --test` instead (real Chromium, real server).
export default defineConfig({
  test: {
    include: ['tests/engine/**/*.test.js', 'tests/app/**/*.test.js'],
    environment: 'node',
    testTimeout: 60000,
  },
});
