// Package static embeds the console's CSS and JavaScript (htmx and uPlot are vendored here: no CDN).
package static

import "embed"

// Files holds arbiter.css, arbiter.js, charts.js, htmx.min.js (htmx.org 2.0.11 from the npm
// registry) and uPlot (uplot 1.6.32 from the npm registry, MIT licence in uplot.LICENSE:
// dist/uPlot.iife.min.js as uplot.iife.min.js and dist/uPlot.min.css as uplot.min.css, unchanged).
// Only the pages with charts load uPlot and charts.js.
//
//go:embed *.css *.js *.LICENSE
var Files embed.FS
