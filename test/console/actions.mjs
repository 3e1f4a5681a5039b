// Each page's actions, driven as a user would: filled in as the pages land.
import { finish } from './lib.mjs';
finish('actions.mjs');
