package cli

import (
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

// listing is a command that lists what one API route answers: the answer's array under key,
// as a table of T's rows, or the answer itself with -o json|yaml.
type listing[T any] struct {
	use, short, long, example string
	path                      string
	query                     url.Values
	key                       string
	header                    []any
	row                       func(T) []any
}

func listCommand[T any](a *app, l listing[T]) *cobra.Command {
	return &cobra.Command{
		Use:     l.use,
		Short:   l.short,
		Long:    l.long,
		Example: l.example,
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := a.client()
			if err != nil {
				return err
			}
			var answer map[string][]map[string]any
			if err := api.call(cmd.Context(), http.MethodGet, l.path, l.query, nil, &answer); err != nil {
				return err
			}
			items := map[string][]map[string]any{l.key: answer[l.key]}
			var list []T
			if err := remarshal(items[l.key], &list); err != nil {
				return err
			}
			return a.print(items, func(w io.Writer) {
				row(w, l.header...)
				for _, item := range list {
					row(w, l.row(item)...)
				}
			})
		},
	}
}
