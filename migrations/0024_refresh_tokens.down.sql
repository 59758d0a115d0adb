DROP TABLE refresh_tokens;
