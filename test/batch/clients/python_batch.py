"""Drives the Batch surface with the official Python client (PyPI `zenrows`), base URL changed only.

Usage: python python_batch.py API_URL API_KEY SITE_URL RECEIVER_URL
Prints one JSON object describing what each call returned; any exception fails the script.
"""

import json
import sys
import tempfile
from pathlib import Path

from zenrows.batch import BatchAPIError, Calendar, Rate, Weekly, ZenRowsBatchClient
from zenrows.batch._download import download_task_to_memory

api, key, site, receiver = sys.argv[1:5]
out = {}
client = ZenRowsBatchClient(api_key=key, base_url=f"{api}/v1", retries=2)

# A closed job, every call of its life.
ref = client.submit_regular(
    [f"{site}ok/{i}" for i in range(12)] + [f"{site}missing/0", {"url": f"{site}ok/99", "external_id": "ext-99", "metadata": {"k": "v"}}],
    zenrows_params={"response_type": "markdown"},
    name="python client",
    metadata={"team": "data"},
    idempotency_key="python-submit-1",
)
out["submit"] = {"job_id": ref.job_id, "accepted": ref.accepted_tasks, "status": ref.status.value if ref.status else None}
again = client.submit_regular(
    [f"{site}ok/{i}" for i in range(12)] + [f"{site}missing/0", {"url": f"{site}ok/99", "external_id": "ext-99", "metadata": {"k": "v"}}],
    zenrows_params={"response_type": "markdown"},
    name="python client",
    metadata={"team": "data"},
    idempotency_key="python-submit-1",
)
out["idempotent_same_job"] = again.job_id == ref.job_id
run = client.wait_for_run(ref.job_id, timeout=90, poll_interval=0.2, max_poll_interval=1)
out["run"] = {"status": run.status.value, "total": run.stats.total, "successful": run.stats.successful, "failed": run.stats.failed, "credits": run.stats.spend.credits if run.stats.spend else None}
job = client.get_job(ref.job_id).data
out["job"] = {"name": job.name, "type": job.type.value, "status": job.status.value, "format": job.format.value if job.format else None, "params": job.zenrows_params}
results = list(client.iter_results(ref.job_id))
out["results"] = len(results)
ok = [r for r in results if r.status.value == "successful"]
out["successful_rows"] = len(ok)
body = download_task_to_memory(ok[0])
out["body_is_markdown"] = body.decode().startswith("# Page")
tagged = [r for r in results if r.external_id == "ext-99"][0]
out["tagged"] = {"metadata": tagged.metadata, "type": tagged.type.value}
failed = list(client.iter_results(ref.job_id, status="failed"))
out["failed_codes"] = [r.error.code for r in failed]
handle = client.get_run(ref.job_id, run_id=run.run_id)
history = handle.task_history(ok[0].task_id)
out["history_attempts"] = len(history.events)
out["runs"] = [r.data.run_sequence for r in client.iter_runs(ref.job_id)]
out["listed"] = ref.job_id in [j.job_id for j in client.iter_jobs(page_size=2)]

with tempfile.TemporaryDirectory() as folder:
    count = handle.download_to_dir(folder)
    out["downloaded_files"] = count
    target = Path(folder) / "export.ndjson"
    client.download_all_results(ref.job_id, run.run_id, target, poll_interval=0.2)
    out["export_lines"] = len(target.read_text().strip().splitlines())

retry = client.job(ref.job_id).retry_failed(idempotency_key="python-retry-1")
out["retry_run_sequence"] = retry.data.run_sequence
final = retry.wait(timeout=90, poll_interval=0.2) if hasattr(retry, "wait") else None
out["retry_status"] = client.get_run(ref.job_id, run_id=retry.run_id).data.status.value

# An open job grown in calls, closed by last_batch.
open_ref = client.submit_open([f"{site}ok/200"])
open_job = client.job(open_ref.job_id)
added = open_job.add_tasks({"tasks": [{"url": f"{site}ok/201"}, {"url": f"{site}ok/202"}]}, idempotency_key="python-add-1")
out["added"] = {"accepted": added.accepted_tasks, "job_status": added.job_status.value}
closing = open_job.add_tasks({"tasks": [{"url": f"{site}ok/203"}], "last_batch": True})
out["closed"] = closing.job_status.value
try:
    open_job.add_tasks({"tasks": [{"url": f"{site}ok/204"}]})
    out["late_add"] = "accepted"
except BatchAPIError as error:
    out["late_add"] = [error.status_code, error.code]
out["open_run"] = client.wait_for_run(open_ref.job_id, timeout=90, poll_interval=0.2).stats.total
# Every task of the open job succeeded: a retry of the failed ones matches nothing.
try:
    open_job.retry_failed()
    out["retry_nothing"] = "accepted"
except BatchAPIError as error:
    out["retry_nothing"] = [error.status_code, error.code]
# The first job's runs have ended: there is nothing to stop.
try:
    client.job(ref.job_id).run.stop()
    out["stop_ended"] = "accepted"
except BatchAPIError as error:
    out["stop_ended"] = [error.status_code, error.code]

# Webhook on a job, set and read back; an http URL is refused.
out["webhook_put"] = open_job.set_webhook(receiver, signature=False).signature
out["webhook_get"] = str(open_job.get_webhook().url)
try:
    open_job.set_webhook("http://example.com/hook", signature=False)
    out["http_webhook"] = "accepted"
except BatchAPIError as error:
    out["http_webhook"] = error.code
open_job.delete_webhook()
try:
    open_job.get_webhook()
    out["webhook_after_delete"] = "present"
except BatchAPIError as error:
    out["webhook_after_delete"] = error.status_code

# Bad input: a parameter Fetch does not take.
try:
    client.submit_regular([f"{site}ok/1"], zenrows_params={"js_rendr": "true"})
    out["bad_param"] = "accepted"
except BatchAPIError as error:
    out["bad_param"] = [error.status_code, error.code]

# A CSV upload.
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as csv_file:
    csv_file.write(f"url,id\n{site}ok/300,a-1\n{site}ok/301,a-2\n")
file_input = client.upload_csv(csv_file.name, fields={"url": "url", "external_id": "id"}, header=True)
csv_ref = client.submit_regular(file_input_id=file_input)
out["csv_accepted"] = csv_ref.accepted_tasks

client.job(open_ref.job_id).delete()
try:
    client.get_job(open_ref.job_id)
    out["after_delete"] = "present"
except BatchAPIError as error:
    out["after_delete"] = error.code

# The current run's controls on a slow job: pause, resume, stop; then one run deleted.
slow = client.submit_regular([f"{site}slow/{i}" for i in range(40)])
controls = client.job(slow.job_id).run
# A rerun while the run is in flight waits for its end.
try:
    client.job(slow.job_id).rerun()
    out["rerun_in_flight"] = "accepted"
except BatchAPIError as error:
    out["rerun_in_flight"] = [error.status_code, error.code]
out["paused"] = [controls.pause().data.pause_state.value, controls.resume().data.pause_state.value]
out["stop_answer"] = controls.stop().data.status.value
stopped = client.wait_for_run(slow.job_id, timeout=90, poll_interval=0.2)
out["stopped"] = stopped.status.value
client.run(slow.job_id, stopped.run_id).delete()
try:
    client.get_run(slow.job_id, run_id=stopped.run_id)
    out["run_after_delete"] = "present"
except BatchAPIError as error:
    out["run_after_delete"] = error.status_code

# A scheduled job: no run until it fires; fired by hand; its schedule paused, changed and resumed.
scheduled = client.submit_scheduled(Rate(every=1, unit="hour"), urls=[f"{site}ok/400", f"{site}ok/401"], name="hourly")
sched = client.job(scheduled.job_id)
loaded = sched.load().data
out["scheduled"] = {"type": loaded.type.value, "state": loaded.schedule_state.value, "rate": loaded.schedule.rate.every, "has_next": loaded.next_scheduled_run is not None, "has_run": loaded.latest_run is not None}
out["schedule_paused"] = sched.schedule.pause().data.schedule_state.value
updated = sched.schedule.update(Calendar(times_of_day=["09:00"], cadence=Weekly(days=["mon"]), timezone="Europe/Berlin")).data
out["schedule_updated"] = [updated.schedule.calendar.times_of_day[0].root, updated.schedule.timezone]
out["schedule_resumed"] = sched.schedule.resume().data.schedule_state.value
manual = sched.rerun()
out["manual_fire"] = [manual.data.trigger.value, manual.wait(timeout=90, poll_interval=0.2).status.value]
out["listed_scheduled"] = [j.job_id for j in client.iter_jobs(job_type="scheduled")] == [scheduled.job_id]
sched.delete()

# Signing keys and a signed test delivery.
first_key = client.rotate_hmac_key()
staged = client.rotate_hmac_key()
client.cancel_hmac_rotation()
again_staged = client.rotate_hmac_key()
client.finalize_hmac_key()
keys = client.list_hmac_keys()
out["hmac"] = {"distinct": len({first_key.kid, staged.kid, again_staged.kid}), "secret_bytes": len(__import__("base64").b64decode(first_key.secret))}
out["hmac_listed"] = {"active": keys.active.kid == again_staged.kid, "candidate": keys.candidate}
test = client.test_webhook({"url": receiver, "signature": True})
out["test_webhook"] = [test.delivered, test.status_code]
# A signed run delivery; the test verifies what arrived with the client's own helper.
signed = client.submit_regular([f"{site}ok/500"], webhook={"url": receiver.replace("/hook", "/signed"), "signature": True})
out["signed_run"] = client.wait_for_run(signed.job_id, timeout=90, poll_interval=0.2).run_id
out["secrets"] = {again_staged.kid: again_staged.secret}

print(json.dumps(out))
