// Package apiversion is the revision of the REST API that the server answers and the command
// line speaks: the server names it on every answer, and the command line compares it with its
// own to say which of the two should be updated.
package apiversion

// Header names the API revision on every answer of the server.
const Header = "X-Arbiter-Api-Version"

// Current is the API revision of this build. It grows when a route or field the command line
// uses changes incompatibly, or one it needs is added (the refresh_token grant: 2).
const Current = 2
