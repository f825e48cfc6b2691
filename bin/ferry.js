#!/usr/bin/env node
import '../dist/src/bin/ferry.js';
