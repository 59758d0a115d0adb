// Package static embeds the console's CSS and JavaScript (htmx is vendored here: no CDN).
package static

import "embed"

// Files holds arbiter.css, arbiter.js and htmx.min.js (htmx.org 2.0.11 from the npm registry).
//
//go:embed *.css *.js
var Files embed.FS
