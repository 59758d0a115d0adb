package web

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument describes every /api/v1 route; TestOpenAPIMatchesRouter keeps the two in
// agreement.
//
//go:embed openapi.json
var openAPIDocument []byte

func serveOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}
