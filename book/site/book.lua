-- book.lua: what the web site adds to a page of book/ (a pandoc Lua filter, run by
-- tools/build-book). The Markdown stays plain enough to read in a terminal; the site gets:
--   * links between pages: [the heap](1.2-symmetric-heap.md) points at 1.2-symmetric-heap.html;
--   * links to course files: `week1/1.3-put-get/rma.c` (inline code naming a file of the course,
--     optionally with :LINE) and [text](../week1/...) point at the file's highlighted copy in
--     src/; any other ../ link points into the repository, two folders up from the site;
--   * an anchor (#) beside every section heading, and "On this page" under the title;
--   * on a chapter page, the files the chapter asks you to edit (from grader/course.json);
--   * figures that link to their SVG, to see them full size;
--   * ```{.text .alt} blocks (a figure's text version) folded under the figure;
--   * ```{.c .compile} listings labelled: make test compiles every one of them;
--   * [a number]{.unmeasured}: a figure that no benchmark has measured yet, marked as such.

local repo_files = {}
local page_kind = ""
local chapter = nil

local function read_meta(meta)
  local files = meta["repo-files"] and pandoc.utils.stringify(meta["repo-files"]) or ""
  for path in files:gmatch("%S+") do
    repo_files[path] = true
  end
  page_kind = meta["page-kind"] and pandoc.utils.stringify(meta["page-kind"]) or ""
  if meta["chapter-dir"] then
    chapter = {
      id = pandoc.utils.stringify(meta["chapter-id"]),
      dir = pandoc.utils.stringify(meta["chapter-dir"]),
      files = pandoc.utils.stringify(meta["chapter-files"] or ""),
    }
  end
end

-- "week1/1.3-put-get/rma.c:16" -> "src/week1/1.3-put-get/rma.c.html#src-16", or nil.
local function source_link(text)
  local path, line = text:match("^([%w_%./%-]+):(%d+)$")
  if not path then
    path = text
  end
  if not repo_files[path] then
    return nil
  end
  return "src/" .. path .. ".html" .. (line and ("#src-" .. line) or "")
end

local function rewrite_target(target)
  if target:match("^%a[%w+.-]*:") or target:match("^#") then
    return target -- another site, or this page
  end
  local repo_path, frag = target:match("^%.%./([^#]*)(#?.*)$")
  if repo_path then
    local src = source_link(repo_path)
    if src then
      return src .. frag
    end
    return "../../" .. repo_path .. frag -- build/book/ is two folders below the course root
  end
  local page, rest = target:match("^([^#/]+)%.md(#?.*)$")
  if page then
    return page .. ".html" .. rest
  end
  return target
end

-- A link inside a link is not HTML: keep the inner one's text only.
local function unlink(inlines)
  local out = pandoc.List()
  for _, el in ipairs(inlines) do
    if el.t == "Link" then
      out:extend(unlink(el.content))
    else
      out:insert(el)
    end
  end
  return out
end

-- Source pages (src/...) are made by tools/build-book with their links already right.
local inline_filter = {
  Link = function(l)
    if page_kind == "source" then
      return nil
    end
    l.target = rewrite_target(l.target)
    l.content = unlink(l.content)
    return l
  end,
  Image = function(img)
    img.src = rewrite_target(img.src)
    return img
  end,
  Code = function(c)
    if page_kind == "source" then
      return nil
    end
    local target = source_link(c.text)
    if target then
      return pandoc.Link({ c }, target, "", { class = "file" })
    end
  end,
}

local function html(s)
  return pandoc.RawBlock("html", s)
end

local function escape(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

local block_filter = {
  -- A figure (an image alone in its paragraph) links to its SVG, to see it full size.
  -- (pandoc 2.17 and later; an older pandoc draws a plain figure, and pandoc 3 its own.)
  Para = function(p)
    local img = p.content[1]
    if not pandoc.write or #p.content ~= 1 or img.t ~= "Image" or not img.title:match("^fig:") then
      return nil
    end
    local caption = pandoc.write(pandoc.Pandoc({ pandoc.Plain(img.caption) }), "html")
    local src = escape(img.src)
    return html('<figure><a class="figure-link" href="' .. src .. '" title="the figure on its own, full size">' ..
      '<img src="' .. src .. '" alt="' .. escape(pandoc.utils.stringify(img.caption)) .. '"></a>' ..
      "<figcaption>" .. caption .. "</figcaption></figure>")
  end,
  CodeBlock = function(cb)
    if cb.classes:includes("alt") then
      return {
        html('<details class="alt"><summary>The same figure as text</summary>'),
        pandoc.CodeBlock(cb.text, { class = "text" }),
        html("</details>"),
      }
    end
    if cb.classes:includes("compile") then
      local what = cb.classes:includes("run") and "compiled and run" or "compiled"
      return pandoc.Div({ cb, html('<p class="listing-note">This listing is ' .. what ..
        ' by <code>make test</code> against the reference runtime.</p>') }, { class = "listing" })
    end
  end,
  Span = function(s)
    if s.classes:includes("unmeasured") then
      s.attributes["title"] = "Not measured yet: a later chapter's benchmark will give this number."
      return s
    end
  end,
}

-- Anchors beside headings, "On this page" and the chapter's files, after the page's title.
local function finish(doc)
  local toc = {}
  local blocks = {}
  for _, b in ipairs(doc.blocks) do
    if b.t == "Header" and b.level >= 2 and b.identifier ~= "" then
      if b.level == 2 and not b.classes:includes("contents-group") then
        table.insert(toc, { b.identifier, pandoc.utils.stringify(b.content) })
      end
      b.content:insert(pandoc.RawInline("html", ' <a class="anchor" href="#' .. b.identifier ..
        '" aria-label="link to this section">#</a>'))
    end
    table.insert(blocks, b)
  end

  local after_title = {}
  if chapter and chapter.files ~= "" then
    local links = {}
    for f in chapter.files:gmatch("%S+") do
      local path = chapter.dir .. "/" .. f
      if repo_files[path] then
        table.insert(links, '<a class="file" href="src/' .. path .. '.html"><code>' .. escape(path) .. "</code></a>")
      else
        table.insert(links, "<code>" .. escape(path) .. "</code>")
      end
    end
    table.insert(after_title, html('<p class="chapter-files"><span>You edit</span> ' ..
      table.concat(links, " ") .. ' <span class="checkpoint">Checkpoint: <code>build/grader/grader test ' ..
      escape(chapter.id) .. "</code></span></p>"))
  end
  if #toc >= 3 and page_kind ~= "source" then
    local items = {}
    for _, t in ipairs(toc) do
      table.insert(items, '<li><a href="#' .. t[1] .. '">' .. escape(t[2]) .. "</a></li>")
    end
    table.insert(after_title, html('<nav class="page-toc" aria-label="On this page"><h2>On this page</h2><ol>' ..
      table.concat(items) .. "</ol></nav>"))
  end

  local result = {}
  local placed = false
  for _, b in ipairs(blocks) do
    table.insert(result, b)
    if not placed and b.t == "Header" and b.level == 1 then
      for _, extra in ipairs(after_title) do
        table.insert(result, extra)
      end
      placed = true
    end
  end
  doc.blocks = result
  return doc
end

return {
  { Meta = read_meta },
  inline_filter,
  block_filter,
  { Pandoc = finish },
}
