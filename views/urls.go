package views

import "context"

// Router builds a path from a route's name (internal/routenames) and its parameters: Echo's Reverse.
type Router interface {
	Reverse(name string, params ...any) string
}

type routerKey struct{}

// WithRouter gives the components rendered with ctx the router their links are built with;
// web renders every page and fragment with it.
func WithRouter(ctx context.Context, r Router) context.Context {
	return context.WithValue(ctx, routerKey{}, r)
}

// URL is the path of the named route with params in place of its ":name" segments.
func URL(ctx context.Context, name string, params ...any) string {
	r, ok := ctx.Value(routerKey{}).(Router)
	if !ok {
		panic("views: rendered without a router (views.WithRouter)")
	}
	path := r.Reverse(name, params...)
	if path == "" {
		panic("views: no route is named " + name)
	}
	return path
}
