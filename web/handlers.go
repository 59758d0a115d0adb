package web

import (
	"context"
	"net/http"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// getByID answers GET on one resource: the UUID path parameter, the store lookup and the view.
func getByID[T, V any](c echo.Context, param string, get func(context.Context, uuid.UUID) (T, error), view func(T) V) error {
	id, err := pathID(c, param)
	if err != nil {
		return err
	}
	v, err := get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view(v))
}

// listAll answers GET on an unpaged list: the list parameters of spec, the store query, and
// the views under key ({"<key>": [...]}, api.md "Lists").
func listAll[T, V any](c echo.Context, spec listquery.Spec, key string, list func(context.Context, listquery.Query) ([]T, error), view func(T) V) error {
	q, err := listquery.Parse(c.QueryParams(), spec)
	if err != nil {
		return err
	}
	items, err := list(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{key: mapSlice(items, view)})
}
