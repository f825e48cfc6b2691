#!/usr/bin/env node
import '../dist/src/bundle/ferry.js';
