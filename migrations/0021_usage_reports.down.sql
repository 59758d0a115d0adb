DROP TABLE usage_reports;
