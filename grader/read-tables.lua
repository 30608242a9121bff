-- read-tables.lua: grader read's pandoc filter. A table whose cells cannot stand side by side
-- within the page's width becomes a list, one item per row, each cell after its column's name,
-- so that no line runs past the terminal's edge.
local columns = 78
if PANDOC_WRITER_OPTIONS and PANDOC_WRITER_OPTIONS.columns then
  columns = PANDOC_WRITER_OPTIONS.columns
end

local stringify = pandoc.utils.stringify

local function width(s)
  return utf8.len(s) or #s
end

local function all_rows(tbl)
  local rows = {}
  for _, body in ipairs(tbl.bodies) do
    for _, row in ipairs(body.body) do rows[#rows + 1] = row end
  end
  return rows
end

function Table(tbl)
  local head = tbl.head.rows[1]
  local rows = all_rows(tbl)
  local widths = {}
  for _, row in ipairs(tbl.head.rows) do
    for j, cell in ipairs(row.cells) do
      widths[j] = math.max(widths[j] or 0, width(stringify(cell.contents)))
    end
  end
  for _, row in ipairs(rows) do
    for j, cell in ipairs(row.cells) do
      widths[j] = math.max(widths[j] or 0, width(stringify(cell.contents)))
    end
  end
  local need = 2
  for _, w in ipairs(widths) do need = need + w + 2 end
  if need <= columns then return nil end
  local items = {}
  for _, row in ipairs(rows) do
    local blocks = {}
    for j, cell in ipairs(row.cells) do
      local text = stringify(cell.contents)
      if text ~= "" then
        local name = head and head.cells[j] and stringify(head.cells[j].contents) or ""
        local inl = {}
        if name ~= "" then inl = {pandoc.Str(name .. ":")} end
        for w in text:gmatch("%S+") do
          if #inl > 0 then inl[#inl + 1] = pandoc.Space() end
          inl[#inl + 1] = pandoc.Str(w)
        end
        blocks[#blocks + 1] = pandoc.Plain(inl)
      end
    end
    items[#items + 1] = blocks
  end
  local out = {}
  local caption = tbl.caption and tbl.caption.long and stringify(tbl.caption.long) or ""
  if caption ~= "" then out[#out + 1] = pandoc.Para({pandoc.Str(caption)}) end
  out[#out + 1] = pandoc.BulletList(items)
  return out
end
