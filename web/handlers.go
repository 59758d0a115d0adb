package web

import (
	"context"
	"net/http"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
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
// the views under key ({"<key>": [...]}, docs/api.md "Lists").
func listAll[T, V any](c echo.Context, spec listquery.Spec, key string, list func(context.Context, listquery.Query) ([]T, error), view func(T) V) error {
	items, _, err := queryList(c, spec, list)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{key: mapSlice(items, view)})
}

// countAnswer is Run:ai's CountResponse.
type countAnswer struct {
	Count int `json:"count"`
}

// countAll answers Run:ai's count of an unpaged list: the items list shows for the request's
// filterBy and search. These lists are small (the organization's units), so they are counted
// as listed, through the very function the list answers with.
func countAll[T any](c echo.Context, spec listquery.Spec, list func(context.Context, listquery.Query) ([]T, error)) error {
	items, _, err := queryList(c, spec, list)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, countAnswer{Count: len(items)})
}

// queryList parses the request's list parameters against spec and runs list with them; it
// returns the query too, for pages that show its sorting.
func queryList[T any](c echo.Context, spec listquery.Spec, list func(context.Context, listquery.Query) ([]T, error)) ([]T, listquery.Query, error) {
	q, err := listquery.Parse(c.QueryParams(), spec)
	if err != nil {
		return nil, q, err
	}
	items, err := list(c.Request().Context(), q)
	return items, q, err
}

// changeTarget starts a change of the resource named by the path parameter "id": it names the
// audit target and parses the id.
func changeTarget(c echo.Context, action, entityType string) (uuid.UUID, error) {
	id, err := pathID(c, "id")
	target(c, action, entityType, c.Param("id"))
	return id, err
}

// adminChange is changeTarget that also checks that the caller is an admin.
func adminChange(c echo.Context, action, entityType, what string) (uuid.UUID, error) {
	id, err := changeTarget(c, action, entityType)
	if err != nil {
		return uuid.Nil, err
	}
	return id, requireAdmin(c, what)
}

// deleteByID answers an admin's DELETE of one resource with 204.
func deleteByID(c echo.Context, entityType, what string, del func(context.Context, uuid.UUID, store.Actor) error) error {
	id, err := adminChange(c, "delete", entityType, what)
	if err != nil {
		return err
	}
	if err := del(c.Request().Context(), id, actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// decodeChange reads a JSON body of the request type R (accepting fields) and turns it into
// the store's change with update.
func decodeChange[R, U any](c echo.Context, fields []string, update func(R) (U, error)) (U, error) {
	var req R
	if err := decodeJSON(c, &req, fields...); err != nil {
		var none U
		return none, err
	}
	return update(req)
}

// createByAdmin answers an admin's POST of a new resource with 201 and its view.
func createByAdmin[R, U, T, V any](c echo.Context, entityType, what string, fields []string, update func(R) (U, error),
	create func(context.Context, U, store.Actor) (T, error), view func(T) V) error {
	target(c, "create", entityType, "")
	if err := requireAdmin(c, what); err != nil {
		return err
	}
	u, err := decodeChange(c, fields, update)
	if err != nil {
		return err
	}
	created, err := create(c.Request().Context(), u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, view(created))
}

// putByAdmin answers an admin's PUT of one resource with 200 and its view.
func putByAdmin[R, U, T, V any](c echo.Context, entityType, what string, fields []string, update func(R) (U, error),
	put func(context.Context, uuid.UUID, U, store.Actor) (T, error), view func(T) V) error {
	id, err := adminChange(c, "update", entityType, what)
	if err != nil {
		return err
	}
	u, err := decodeChange(c, fields, update)
	if err != nil {
		return err
	}
	updated, err := put(c.Request().Context(), id, u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view(updated))
}
