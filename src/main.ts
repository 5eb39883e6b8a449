#!/usr/bin/env bun
// Entry point from a checkout (`bun src/main.ts serve`); the CLI lives in src/daemon/main.ts.
import "./daemon/main.ts";
