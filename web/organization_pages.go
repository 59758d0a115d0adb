package web

import "github.com/labstack/echo/v4"

func (s *Server) routeOrganizationPages(e *echo.Echo) {}
