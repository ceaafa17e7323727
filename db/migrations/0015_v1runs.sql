-- A workflow's runs, newest first and keyset-paged (GET /api/v1/workflows/{id}/runs): the index by
-- workflow gains the id, the tiebreak of the page order, so a page is read straight off the index
-- however many runs the workflow has; the old index is its prefix and goes.
create index executions_workflow_page_idx on executions (workflow_id, created_at desc, id desc);
drop index executions_workflow_idx;
