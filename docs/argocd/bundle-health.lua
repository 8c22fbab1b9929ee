-- Argo CD health check for smith.atlassian.com/Bundle (bundlesmith).
-- Argo CD runs it with the live Bundle in `obj` and reads `hs`.
local hs = { status = "Progressing", message = "Waiting for the operator to reconcile the Bundle" }

local function condition(conditions, type)
  if conditions == nil then return nil end
  for _, c in ipairs(conditions) do
    if c.type == type then return c end
  end
  return nil
end

local function isTrue(c)
  return c ~= nil and c.status == "True"
end

if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.message = "Being deleted"
  return hs
end
local status = obj.status
if status == nil or status.conditions == nil then
  return hs
end
-- The operator has not decided on this generation of the spec yet.
if status.observedGeneration == nil or obj.metadata.generation == nil or status.observedGeneration < obj.metadata.generation then
  hs.message = "Waiting for the operator to observe generation " .. tostring(obj.metadata.generation)
  return hs
end

local stalled = condition(status.conditions, "Stalled")
local ready = condition(status.conditions, "Ready")
local err = condition(status.conditions, "Error")
local reconciling = condition(status.conditions, "Reconciling")

-- Cannot progress without a change: an invalid spec, a terminal resource error, Forbidden.
if isTrue(stalled) then
  hs.status = "Degraded"
  hs.message = stalled.message or stalled.reason or "Stalled"
  return hs
end
if isTrue(ready) then
  -- Ready, with objects whose deletion waits for a person to approve it.
  if status.awaitingApprovalCount ~= nil and status.awaitingApprovalCount > 0 then
    hs.status = "Suspended"
    hs.message = tostring(status.awaitingApprovalCount) .. " object(s) wait for their deletion to be approved"
    return hs
  end
  hs.status = "Healthy"
  hs.message = ready.message or "Ready"
  return hs
end
-- An error the operator retries (it may go away by itself): still progressing, with the error said.
if isTrue(err) then
  hs.message = err.message or err.reason or "Error"
  return hs
end
if isTrue(reconciling) then
  hs.message = reconciling.message or reconciling.reason or "Reconciling"
  return hs
end
if ready ~= nil and ready.message ~= nil then
  hs.message = ready.message
end
return hs
