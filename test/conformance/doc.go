package conformance

//go:generate go run ./internal/extract/generate ../../../shared/reference/runai-openapi.json testdata/runai-extract.json
